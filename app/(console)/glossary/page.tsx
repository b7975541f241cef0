// The console's words, each with an anchor: the inline explanations (<Term>) link here.
import { GLOSSARY } from "@/components/glossary";

export const metadata = { title: "Glossary" };

export default function GlossaryPage() {
  return (
    <section aria-labelledby="glossary-title">
      <div className="page-head">
        <h1 id="glossary-title">Glossary</h1>
        <p className="muted">The words the console uses for stopping agents, in plain terms. Downloads use the names in code.</p>
      </div>
      <dl className="glossary card">
        {GLOSSARY.map((e) => (
          <div key={e.id} id={e.id} className="glossary-entry">
            <dt>
              {e.term}
              {e.wire ? (
                <>
                  {" "}
                  <code className="muted">{e.wire}</code>
                </>
              ) : null}
            </dt>
            <dd>
              {e.short}
              {e.more ? ` ${e.more}` : null}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
