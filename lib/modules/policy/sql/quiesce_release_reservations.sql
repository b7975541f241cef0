CREATE OR REPLACE FUNCTION quiesce_release_reservations() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_team text; v_res quiesce_reservation[];
BEGIN
    -- Work that never started gives its reservation back, and so does a running call a stop settled as
    -- cancelled without effect (the provider's word); work with an unknown outcome keeps it (the spend may
    -- have happened); finished work keeps its estimate until the holder reports the actual cost.
    IF TG_TABLE_NAME = 'operations' THEN
        -- BEFORE UPDATE OF state, fired (see its WHEN) only for a call holding reservations that now never started
        NEW.budget_reservations := quiesce_budget_give_back(NEW.team_id, NEW.budget_reservations, NEW.state::text);
        RETURN NEW;
    END IF;
    IF NEW.settled_state IS DISTINCT FROM 'cancelled_without_effect'
       OR (TG_OP = 'UPDATE' AND OLD.settled_state IS NOT DISTINCT FROM NEW.settled_state) THEN
        RETURN NULL;
    END IF;
    SELECT o.team_id, o.budget_reservations INTO v_team, v_res
      FROM operations o WHERE o.id = NEW.operation_id AND o.budget_reservations IS NOT NULL
       FOR UPDATE;
    IF FOUND THEN
        v_res := quiesce_budget_give_back(v_team, v_res, 'cancelled_without_effect');
        UPDATE operations SET budget_reservations = v_res WHERE id = NEW.operation_id;
    END IF;
    RETURN NULL;
END;
$fn$;
