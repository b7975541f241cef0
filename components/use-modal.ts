"use client";
// A <dialog> that opens as a modal when `open` turns true (after `onOpen` resets its fields) and closes
// when it turns false: the one open/close rule of every dialog in the console.
import { useEffect, useRef } from "react";

export function useModal(open: boolean, onOpen: () => void) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      onOpen();
      d.showModal();
    }
    if (!open && d.open) d.close();
  }, [open, onOpen]);
  return ref;
}
