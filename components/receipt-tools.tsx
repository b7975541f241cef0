"use client";
// Small client pieces of the receipt page: print, copy the stable link, and a watcher that notices a
// receipt being issued (or re-issued after a reconciliation) without a reload.
import { useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState, useSyncExternalStore } from "react";
import type { ReceiptView } from "@/lib/modules/runs";
import { getJson } from "./providers";

export function PrintButton() {
  return (
    <button type="button" className="btn" onClick={() => window.print()}>
      Print
    </button>
  );
}

const noSubscription = () => () => {};

export function CopyLink({ path }: { path: string }) {
  const [copied, setCopied] = useState(false);
  // The server renders the path; the browser shows the full link (its origin is only known there).
  const url = useSyncExternalStore(
    noSubscription,
    () => `${window.location.origin}${path}`,
    () => path,
  );
  return (
    <span className="copy-link">
      <code className="mono">{url}</code>
      <button
        type="button"
        className="btn btn-small"
        onClick={async () => {
          await navigator.clipboard?.writeText(url).catch(() => {});
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        }}
      >
        {copied ? "Copied" : "Copy link"}
      </button>
    </span>
  );
}

/** Refreshes the server-rendered page when the latest version changes (first issue or a re-issue). */
export function ReceiptWatcher({ barrierId, latestVersion, auto }: { barrierId: string; latestVersion: number | null; auto: boolean }) {
  const router = useRouter();
  const q = useQuery({
    queryKey: ["receipt", barrierId],
    queryFn: () => getJson<ReceiptView>(`/api/console/receipts/${barrierId}`),
    refetchInterval: latestVersion === null ? 1500 : 5000,
  });
  const seen = q.data?.receipt?.latestVersion ?? null;
  const newer = seen !== null && seen !== latestVersion;
  useEffect(() => {
    if (newer && auto) router.refresh();
  }, [newer, auto, router]);
  if (!newer || auto) return null;
  return (
    <div className="notice notice-info" role="status">
      A newer version (v{seen}) of this receipt has been issued. <a href={`/receipts/${barrierId}`}>Open the latest version</a>
    </div>
  );
}
