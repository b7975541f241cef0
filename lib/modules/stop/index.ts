import "server-only";

export { controlListener } from "./abort/listener";
export { getBarrierView, getReceipt, verifyReceipt } from "./barriers";
export { countOpenReconciliations } from "./console/counts";
export { getConsoleReceipt, receiptBarrier } from "./console/receipt";
export { listTeamMembers, type Member } from "./console/reconciliations";
export { markDrillTeam } from "./drills";
export { runBarrierWorker, workerDefaults } from "./engine/worker";
export { resolveEnvironment } from "./environment-resolve";
export { killRun } from "./kill";
export { recordObserved } from "./observed";
export { SimProviderClient } from "./providers/sim-client";
export { startSimProvider, type SimMode } from "./providers/sim-server";
export { assignReconciliation, listReconciliations, memberPrincipal, resolveReconciliation, userIdForEmail } from "./reconciliations";
export { assignRecovery, getRecovery, listRecoveries, recordRecovery, startRecovery } from "./recovery";
export { createStop, getStop, previewStop, resumeStop, toFilter } from "./stops";
export { EXIT_CODES, itemsOf, trustedKeys, verifyReceipts } from "./verify-receipts";
