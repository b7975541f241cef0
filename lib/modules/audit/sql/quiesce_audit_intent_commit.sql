CREATE OR REPLACE FUNCTION quiesce_audit_intent_commit() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM quiesce_append_audit(NEW.team_id, NEW.actor, NEW.action, NEW.target, NEW.before, NEW.after);
    IF NEW.notify IS NOT NULL THEN
        PERFORM pg_notify('quiesce_control', NEW.notify);
    END IF;
    DELETE FROM audit_intents WHERE id = NEW.id;
    RETURN NULL;
END;
$fn$;
