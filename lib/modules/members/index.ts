import "server-only";

export { changeOwnPassword } from "./account";
export {
  ensureMembership,
  ensureTeam,
  ensureUser,
  findTeamBySlug,
  findUserByEmail,
  setUserPasswordHash,
  type TeamRow,
} from "./admin-directory";
export { actorLabels, peopleOf, peopleOfTeam, type Person } from "./console/people";
export { listMembers, removeMember, setMemberRole, setMembershipDisabled, setUserDisabled, type MemberView } from "./members";
export { badKeyWait, passwordGate, recordBadKey, recordSignIn } from "./sign-in";
export { getTeamStopSettings, setTeamStopSettings } from "./team-settings";
