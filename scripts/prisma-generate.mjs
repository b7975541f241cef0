// Runs `prisma generate` offline. Prisma's CLI wants a schema-engine binary path even though
// generate never uses it, and the binary cannot be downloaded here; any existing file will do.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const cli = require.resolve("prisma/build/index.js");
const res = spawnSync(process.execPath, [cli, "generate"], { stdio: "inherit", env });
process.exit(res.status ?? 1);
