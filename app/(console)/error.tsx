"use client";
// Any page that fails to render shows what happened and a way to retry, inside the console shell.
import { useEffect } from "react";
import { ErrorNotice } from "@/components/states";

export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  return (
    <div className="narrow-box">
      <ErrorNotice
        title="This page could not be loaded"
        message={`${error.digest ? `Error ${error.digest}. ` : ""}The control plane may be restarting or the database unreachable. Nothing was changed.`}
        retry={reset}
      />
    </div>
  );
}
