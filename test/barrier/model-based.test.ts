// The model-based test of the stop evidence (docs/evidence.md; test/support/model-harness.ts): random trees and command sequences
// against real PostgreSQL and the real barrier engine, then I1–I7 for every barrier (I6: a non-holder of the same team leaves no trace; I7: a rolled_back item has a later effect check that answered absent). 300 sequences here;
// `npm run evals -- --long` runs 10 000. On failure fast-check prints the seed and the shrunk path:
// replay with QUIESCE_MODEL_SEED=<seed> QUIESCE_MODEL_PATH=<path>.
import { afterAll, beforeAll, test } from "vitest";
import fc from "fast-check";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { makeModelTeam, modelProperty, type ModelTeam } from "../support/model-harness";

let team: ModelTeam;
beforeAll(async () => {
  team = await makeModelTeam();
});
afterAll(async () => {
  await team?.close();
  await prisma().$disconnect();
  await closePool();
});

const runs = Number(process.env.QUIESCE_MODEL_RUNS ?? 300);
const seed = process.env.QUIESCE_MODEL_SEED ? Number(process.env.QUIESCE_MODEL_SEED) : undefined;
const path = process.env.QUIESCE_MODEL_PATH;

test(`I1–I7 hold after ${runs} random sequences of kills, reports, strangers' reports, pauses, engine crashes, resolutions and recoveries`, async () => {
  await fc.assert(modelProperty(team), {
    numRuns: runs,
    ...(seed !== undefined ? { seed } : {}),
    ...(path ? { path } : {}),
    endOnFailure: false,
  });
}, 600_000);
