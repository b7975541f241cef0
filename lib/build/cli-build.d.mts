// Types of lib/build/cli-build.mjs (plain JavaScript: it runs before anything TypeScript can be loaded).
export declare const BUILD_DIR: string;
export declare const ROUTE_DIRS: string[];
export declare function routeFiles(root: string): string[];
export declare function checkCliBuild(root: string): Promise<{ fresh: boolean; reason: string; dir?: string }>;
export declare function buildCli(root: string): Promise<{ dir: string; ms: number }>;
export declare function ensureCliBuild(root: string, log?: (line: string) => void): Promise<{ dir: string; built: boolean }>;
