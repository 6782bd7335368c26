/** Types for `stale-builds.mjs`, which `npm start` runs as a plain script before anything is built. */
export declare const TYPESCRIPT_PROJECTS: readonly string[];
export declare const BUNDLED_PACKAGES: readonly string[];
export declare const WEB_UI_INPUTS: readonly string[];
export declare function typeScriptIsStale(root: string): boolean;
export declare function bundlesAreStale(root: string): boolean;
export declare function webUiIsStale(root: string): boolean;
