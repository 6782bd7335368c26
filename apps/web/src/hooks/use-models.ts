import type { CPPClient } from '@promethea/cpp-client';
import type { ModelInfo } from '@promethea/cpp-protocol';
import { useEffect, useState } from 'react';

/** The models the server offers, and the one a prompt gets without naming one; empty until the server answers. */
export function useModels(
  client: CPPClient | null,
  report: (error: unknown) => void,
): { models: ModelInfo[]; defaultModel: string | undefined } {
  const [offer, setOffer] = useState<{ models: ModelInfo[]; defaultModel: string | undefined }>({
    models: [],
    defaultModel: undefined,
  });
  useEffect(() => {
    if (!client) return;
    let current = true;
    client.listModels().then((answer) => current && setOffer(answer), report);
    return () => {
      current = false;
    };
  }, [client, report]);
  return offer;
}
