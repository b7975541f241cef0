"use client";
// The pieces the admin pages (API keys, webhooks) share: a secret shown exactly once, a titled list card
// with its empty state, and the compact table with an actions column. Same markup and classes on both
// pages, so styles and the browser journeys find them the same way.
import { useState, type ReactNode } from "react";
import { EmptyState } from "./states";
import { TableScroll } from "./table-scroll";

/** A newly issued secret: shown once, here, with Copy and Done. */
export function SecretOnce({
  title,
  note,
  secret,
  testId,
  onDone,
}: {
  title: ReactNode;
  note: string;
  secret: string;
  testId: string;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret-box" role="alert">
      <strong>{title}</strong> {note}
      <div className="secret-row">
        <code className="mono secret" data-testid={testId}>
          {secret}
        </code>
        <button
          type="button"
          className="btn btn-small"
          onClick={async () => {
            await navigator.clipboard?.writeText(secret).catch(() => {});
            setCopied(true);
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="btn btn-small btn-ghost" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** A card listing `count` things: its heading (with the count), then the empty state or the table. */
export function ListCard({
  id,
  title,
  count,
  after,
  intro,
  empty,
  children,
}: {
  id: string;
  title: string;
  count: number;
  /** Shown after the count in the heading. */
  after?: ReactNode;
  /** A line under the heading. */
  intro?: ReactNode;
  empty: { title: string; body: ReactNode };
  children: ReactNode;
}) {
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>
        {title} <span className="muted">({count})</span>
        {after}
      </h2>
      {intro ? <p className="small muted">{intro}</p> : null}
      {count === 0 ? <EmptyState title={empty.title}>{empty.body}</EmptyState> : children}
    </section>
  );
}

/** The compact table of an admin list; the last column holds each row's buttons. */
export function AdminTable<T>({
  columns,
  rows,
  rowKey,
  rowClassName,
  testId,
  label = "Table",
  children,
}: {
  columns: string[];
  /** the scroll region's accessible name */
  label?: string;
  rows: T[];
  rowKey: (row: T) => string;
  rowClassName?: (row: T) => string | undefined;
  testId?: string;
  /** The row's cells (`<td>`s), the actions cell last. */
  children: (row: T) => ReactNode;
}) {
  return (
    <TableScroll label={label}>
      <table className="table compact" data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)} className={rowClassName?.(r)}>
              {children(r)}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
