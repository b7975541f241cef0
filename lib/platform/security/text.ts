// Text that PostgreSQL cannot store or that no honest client sends: a NUL character (text and jsonb
// refuse it, which used to surface as a 500) and a lone UTF-16 surrogate (not valid Unicode; it
// cannot be encoded as UTF-8). Every string a caller hands us — body fields at any depth, object
// keys, query values and path ids — is checked before anything else reads it.

/** Why `s` is refused, or null when it is clean. */
export function unsafeTextReason(s: string): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return "must not contain a NUL character";
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return "must not contain a lone surrogate (not valid Unicode)";
    }
    if (c >= 0xdc00 && c <= 0xdfff) return "must not contain a lone surrogate (not valid Unicode)";
  }
  return null;
}

export interface UnsafeField {
  field: string;
  message: string;
}

/** JSON nested deeper than this is refused: no honest caller needs it, and deeper still, PostgreSQL's
 * jsonb input and any recursive walk run out of stack (a 500 instead of a 400). */
export const MAX_JSON_DEPTH = 64;

/**
 * The first string (value or object key) under `value` that is refused, named by its path, or the first
 * object or array nested deeper than MAX_JSON_DEPTH. An explicit stack, not recursion: every level is
 * checked, however deep, without a stack of our own to exhaust.
 */
export function findUnsafeText(value: unknown, where: string): UnsafeField | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: where, depth: 0 }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { value: v, path, depth } = top;
    if (typeof v === "string") {
      const why = unsafeTextReason(v);
      if (why) return { field: path, message: why };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return { field: path, message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    // Pushed in reverse, so values are visited in document order.
    const children: { value: unknown; path: string; depth: number }[] = [];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) children.push({ value: v[i], path: `${path}.${i}`, depth: depth + 1 });
    } else {
      for (const [k, child] of Object.entries(v)) {
        const keyWhy = unsafeTextReason(k);
        if (keyWhy) return { field: `${path}.${JSON.stringify(k)}`, message: `field name ${keyWhy}` };
        children.push({ value: child, path: `${path}.${k}`, depth: depth + 1 });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return null;
}

/** `%`, `_` and the escape character itself, escaped for a LIKE / ILIKE pattern (Prisma `contains`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}
