import type { CPPClient } from '@promethea/cpp-client';
import { useCallback, useEffect, useState } from 'react';
import { describeError, type ShownError } from '../lib/describe-error.js';

/** Older errors drop off the list; the newest are what a person can still act on. */
const KEPT_ERRORS = 5;

export interface ErrorFeed {
  errors: ShownError[];
  report(error: unknown): void;
  dismiss(id: number): void;
}

/**
 * Every error the person should see, in one place: those the client reports on its own (a CPP_ERROR that answers
 * no request of this tab, a provider failure) and every refused action the UI reports.
 */
export function useErrorFeed(client: CPPClient | null): ErrorFeed {
  const [errors, setErrors] = useState<ShownError[]>([]);

  const report = useCallback((error: unknown) => {
    setErrors((shown) => [...shown, describeError(error)].slice(-KEPT_ERRORS));
  }, []);

  const dismiss = useCallback((id: number) => {
    setErrors((shown) => shown.filter((error) => error.id !== id));
  }, []);

  useEffect(() => {
    if (!client) return;
    client.on('error', report);
    return () => {
      client.off('error', report);
    };
  }, [client, report]);

  return { errors, report, dismiss };
}
