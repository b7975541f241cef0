// Where the prebuilt CLI (lib/build/cli-build.mjs) lives when this code runs from it; null when it runs
// from source (tsx, vitest). The build replaces this module with the folder of its own output files, so
// `npm start` can start its child processes from the same build it runs from.
export const BUILT_DIR: string | null = null;
