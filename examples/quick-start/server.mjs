import { CPPServer } from '@promethea/cpp-server';

const server = new CPPServer({ port: 8080 });

server.on('pivot', async (context) => {
  console.log('Halting active stream for thread:', context.threadId);
  await context.abortActiveStream();
  
  console.log('Splicing thread tree and spawning sibling...');
  await context.spawnSiblingStream();
});
