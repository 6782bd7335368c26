import { CPPClient } from '@promethea/cpp-client';

const client = new CPPClient({
  endpoint: 'wss://lvhllc.org/v1/cpp/session',
  did: 'did:key:z6MkpTHR8VNs...'
});

// Intercept streaming generation
client.pivot({
  userPrompt: 'Let us pivot to Rust implementation instead.',
  onStream: (chunk) => {
    console.log('Streaming new branch:', chunk);
  }
});
