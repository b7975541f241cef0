// An eval case: a drill case run against the eval stack, or a case of its own that controls
// processes (kills an engine, restarts the workers and the web app).
import type { CaseDef } from "../../lib/drill/types";
import type { Stack } from "../support/stack";

export type EvalCase = CaseDef<Stack>;
