// The route modules the API process serves, as a table of loaders: filled in by the prebuilt CLI
// (lib/build/cli-build.mjs), which bundles every app/<api|metrics|.well-known>/**/route.ts; undefined
// when running from source, where lib/api/node-server.ts imports each route file from disk.
export const routeModules: Record<string, () => Promise<Record<string, unknown>>> | undefined = undefined;
