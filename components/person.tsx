// A person as the console names them: display name and e-mail, the id kept as an attribute (never as
// text). An actor that is not a member (an API key, the system) keeps its label.
export interface PersonLike {
  actor: string;
  userId: string | null;
  name: string | null;
  email: string | null;
}

export function PersonName({ person }: { person: PersonLike }) {
  if (!person.email) {
    const key = /key:(\S+)/.exec(person.actor)?.[1];
    return <span data-actor={person.actor}>{key ? `API key ${key}` : person.actor}</span>;
  }
  return (
    <span className="person" data-user-id={person.userId ?? undefined} title={person.actor}>
      {person.name ? (
        <>
          {person.name} <span className="muted">&lt;{person.email}&gt;</span>
        </>
      ) : (
        person.email
      )}
    </span>
  );
}
