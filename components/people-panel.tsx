"use client";
// People: change a member's role, remove a member, disable or re-enable a membership in this team or a
// user everywhere (admins only; the server refuses anyone else, and a user-wide change unless the admin
// administers every team of that user, whatever this page shows).
import { useRouter } from "next/navigation";
import { useState } from "react";
import {
  removeMemberAction,
  setMemberRoleAction,
  setMembershipDisabledAction,
  setUserDisabledAction,
} from "@/app/(console)/people/actions";
import type { MemberView } from "@/lib/modules/members";
import { TableScroll } from "./table-scroll";

const ROLES = ["viewer", "operator", "manager", "admin"] as const;

export function PeoplePanel({ members, me }: { members: MemberView[]; me: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  async function act(userId: string, call: () => Promise<{ ok: true } | { ok: false; message: string }>) {
    setBusy(userId);
    setError(null);
    const r = await call();
    setBusy(null);
    if (!r.ok) setError(r.message);
    router.refresh();
  }

  return (
    <div>
      {error ? (
        <p role="alert" className="error">
          {error}
        </p>
      ) : null}
      <TableScroll label="People (table)">
        <table className="table">
          <thead>
            <tr>
              <th>Email</th>
              <th>Name</th>
              <th>Role</th>
              <th>Status</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.userId}>
                <td>{m.email}</td>
                <td>{m.name}</td>
                <td>
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={busy === m.userId || m.disabled}
                    onChange={(e) => act(m.userId, () => setMemberRoleAction({ userId: m.userId, role: e.target.value }))}
                  >
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{m.userDisabled ? "disabled everywhere" : m.disabled ? "disabled in this team" : "active"}</td>
                <td>
                  {m.userId === me ? (
                    <span className="muted">you</span>
                  ) : (
                    <>
                      <button
                        type="button"
                        className="btn"
                        disabled={busy === m.userId}
                        onClick={() => act(m.userId, () => setMembershipDisabledAction({ userId: m.userId, disabled: !m.disabled }))}
                      >
                        {m.disabled ? "Enable in team" : "Disable in team"}
                      </button>{" "}
                      <button
                        type="button"
                        className="btn"
                        disabled={busy === m.userId}
                        title="Every team the user belongs to: needs admin of each of them"
                        onClick={() => act(m.userId, () => setUserDisabledAction({ userId: m.userId, disabled: !m.userDisabled }))}
                      >
                        {m.userDisabled ? "Enable everywhere" : "Disable everywhere"}
                      </button>{" "}
                      <button
                        type="button"
                        className="btn danger"
                        disabled={busy === m.userId}
                        onClick={() => {
                          if (window.confirm(`Remove ${m.email} from the team?`))
                            void act(m.userId, () => removeMemberAction({ userId: m.userId }));
                        }}
                      >
                        Remove
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
