// The console's one table: a header row of column names and the rows given, in the one horizontal
// scroller (TableScroll) when it has a label, in a plain wrapper, or bare.
import type { ReactNode } from "react";
import { TableScroll } from "./table-scroll";

export type Column = string | { label: ReactNode; key: string; className?: string };

export function DataTable({
  columns,
  children,
  scrollLabel,
  wrap = false,
  caption,
  className = "table",
}: {
  columns: Column[];
  /** the rows (`<tr>` elements) */
  children: ReactNode;
  /** a named, focusable scroll region (TableScroll) */
  scrollLabel?: string;
  /** a plain `.table-wrap` around it (without scrollLabel) */
  wrap?: boolean;
  caption?: string;
  className?: string;
}) {
  const table = (
    <table className={className}>
      {caption ? <caption className="sr-only">{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((c) =>
            typeof c === "string" ? (
              <th key={c} scope="col">
                {c}
              </th>
            ) : (
              <th key={c.key} scope="col" className={c.className}>
                {c.label}
              </th>
            ),
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
  if (scrollLabel) return <TableScroll label={scrollLabel}>{table}</TableScroll>;
  return wrap ? <div className="table-wrap">{table}</div> : table;
}
