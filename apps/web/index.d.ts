/** The built web UI: serve this directory at `/` (CPPServer's `staticDir`, cpp-server's `--static-dir`). */
export declare const staticDir: string;
