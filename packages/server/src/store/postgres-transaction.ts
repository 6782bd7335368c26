import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` on one connection inside one transaction: committed when it resolves, rolled back when anything
 * (the work or the COMMIT) throws. `begin` may name an isolation level.
 */
export async function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    const rollbackError = await client.query('ROLLBACK').then(
      () => undefined,
      (failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))),
    );
    // A connection that could not roll back is in an unknown state: the pool destroys it instead of reusing it.
    client.release(rollbackError);
    throw error;
  }
}
