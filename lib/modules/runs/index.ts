import "server-only";

export { assertRunVisible, type UncertainRow } from "./console/run-detail";
export { MATCHING_IDS_CAP, listMatchingRunIds, type RunRow } from "./console/runs";
export { createSavedView, deleteSavedView, listSavedViews, type SavedView } from "./console/saved-views";
export { listRunTimeline, type TimelinePage } from "./console/timeline";
export {
  barrierView,
  receiptView,
  openWorkView,
  runView,
  runsView,
  type BarrierView,
  type ReceiptView,
  type OpenWorkView,
  type RunView,
  type Rung,
  type RunsView,
  type TreeNode,
} from "./console/views";
export { reportEnvironment, type RunEnvironmentView } from "./environment";
export { pauseRun, resumeRun } from "./lifecycle";
export { databaseMetricsText } from "./metrics";
export { completeOperation, recordOperationProvider, registerOperation } from "./operations";
export { finishRun } from "./run-finish";
export { createRun } from "./register/create-run";
export { getRunView, listRuns } from "./runs";
