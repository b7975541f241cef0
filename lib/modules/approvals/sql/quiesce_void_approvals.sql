CREATE OR REPLACE FUNCTION quiesce_void_approvals() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    -- A pause, kill, epoch change, lease revocation or fleet stop voids every open approval below it at once:
    -- nobody is asked about an agent that no longer runs, and a yes given later admits nothing.
    IF TG_TABLE_NAME = 'runs' THEN
        IF NOT ((NEW.lifecycle IN ('paused', 'killed') AND OLD.lifecycle IS DISTINCT FROM NEW.lifecycle)
                OR NEW.epoch > OLD.epoch) THEN
            RETURN NULL;
        END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(),
                               void_cause = CASE WHEN NEW.lifecycle = 'killed' THEN 'killed'
                                                 WHEN NEW.lifecycle = 'paused' AND OLD.lifecycle IS DISTINCT FROM NEW.lifecycle THEN 'paused'
                                                 ELSE 'epoch_changed' END
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND NEW.id = ANY (a.run_path);
    ELSIF TG_TABLE_NAME = 'leases' THEN
        IF NEW.revoked_at IS NULL OR OLD.revoked_at IS NOT NULL THEN RETURN NULL; END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(), void_cause = 'lease_revoked'
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND NEW.id = ANY (a.lease_path);
    ELSE -- stop_scopes: a fleet pause or kill
        IF NEW.lifted_at IS NOT NULL THEN RETURN NULL; END IF;
        UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(),
                               void_cause = CASE WHEN NEW.action = 'kill' THEN 'fleet_kill' ELSE 'fleet_pause' END
         WHERE a.team_id = NEW.team_id AND a.state IN ('pending', 'approved') AND a.used_at IS NULL
           AND EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY (a.run_path) AND r.team_id = NEW.team_id
                                             AND quiesce_scope_matches(NEW, r));
    END IF;
    RETURN NULL;
END;
$fn$;
