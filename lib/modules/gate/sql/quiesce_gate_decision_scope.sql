CREATE OR REPLACE FUNCTION quiesce_gate_decision_scope() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NEW.team_id IS NOT NULL AND EXISTS (SELECT 1 FROM runs r WHERE r.id = NEW.run_id AND r.team_id <> NEW.team_id) THEN
        NEW.run_id := '(another team''s run)';
    END IF;
    RETURN NEW;
END;
$fn$;
