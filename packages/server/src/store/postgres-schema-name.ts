/** Where the tables live unless told otherwise; apart from the pool (and pg), so that the CLI's flags need no driver. */
export const DEFAULT_SCHEMA = 'public';

/**
 * Schema names go into `search_path` and into DDL, so only plain lowercase identifiers are accepted: they need
 * no quoting anywhere and cannot smuggle SQL in.
 */
const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkSchemaName(schema: string): string {
  if (!PLAIN_IDENTIFIER.test(schema)) {
    throw new Error(
      `PostgreSQL schema "${schema}" must be a lowercase identifier of at most 63 characters (a-z, 0-9, _)`,
    );
  }
  return schema;
}
