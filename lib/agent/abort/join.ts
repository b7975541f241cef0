// Joining a watch that several callers share (one per run group or event stream): a member waits for
// the watch to be ready, and leaves again when it fails, so a failed watch keeps no member behind.
export async function joinShared<T>(members: Set<T>, member: T, ready: Promise<unknown> | null): Promise<void> {
  members.add(member);
  try {
    await ready;
  } catch (err) {
    members.delete(member);
    throw err;
  }
}
