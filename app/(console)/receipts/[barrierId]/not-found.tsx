// A receipt version that does not exist (`?version=n` past the last one): still a 404, but the page says
// which versions do exist and links the latest, so a stale link in a review packet is not a dead end.
// The barrier itself is visible (its layout checked it); the boundary gets no props, so proxy.ts passes
// the path and query on. Plain links, not <Link>: a client navigation that changes only the query
// keeps Next's not-found boundary up (it resets on a new path).
import { headers } from "next/headers";
import { requireSession } from "@/lib/modules/sessions";
import { getConsoleReceipt } from "@/lib/modules/stop";
import { ReceiptVersionQuery } from "@/lib/schemas/console";
import { ReceiptDecisionBadge } from "@/components/badges";
import { Time } from "@/components/time";

export default async function ReceiptVersionNotFound() {
  const s = await requireSession();
  const h = await headers();
  const barrierId = decodeURIComponent((h.get("x-quiesce-path") ?? "").split("/")[2] ?? "");
  const asked = ReceiptVersionQuery.safeParse(Object.fromEntries(new URLSearchParams(h.get("x-quiesce-search") ?? "")));
  const wanted = asked.success ? asked.data.version : undefined;
  const latest = await getConsoleReceipt(s.principal, barrierId).catch(() => null);
  const count = latest?.versions.length ?? 0;
  return (
    <div className="narrow-box">
      <div className="empty" role="status">
        <h1 className="empty-title">404 — {wanted ? `no version ${wanted} of this receipt` : "no such receipt version"}</h1>
        {latest ? (
          <>
            <p>
              This receipt has {count} {count === 1 ? "version" : "versions"}:
            </p>
            <ol className="plain-list versions" reversed>
              {[...latest.versions].reverse().map((x) => (
                <li key={x.version}>
                  <a href={`/receipts/${barrierId}?version=${x.version}`}>version {x.version}</a>{" "}
                  <ReceiptDecisionBadge value={x.decision} /> issued <Time iso={x.verifiedAt} />
                </li>
              ))}
            </ol>
            <p>
              <a href={`/receipts/${barrierId}`}>Open the latest, version {latest.latestVersion}</a>
            </p>
          </>
        ) : (
          <p>
            No receipt has been issued for this stop yet. <a href={`/receipts/${barrierId}`}>Wait for it on the receipt page</a>
          </p>
        )}
      </div>
    </div>
  );
}
