CREATE OR REPLACE FUNCTION quiesce_default_owner(p_team_id text, p_run_id text, OUT user_id text, OUT chosen_by text)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    -- The person who owns work nobody else was named for: the team's setting, else who asked for the
    -- stop covering the run (a user, not a key or the system), else the team's first admin.
    SELECT t.default_reconciler_user_id INTO user_id
      FROM teams t JOIN memberships m ON m.team_id = t.id AND m.user_id = t.default_reconciler_user_id
     WHERE t.id = p_team_id;
    chosen_by := 'system:default-owner (team setting)';
    IF user_id IS NULL THEN
        SELECT m.user_id INTO user_id
          FROM runs r JOIN barriers b ON b.run_id = ANY (r.path)
          JOIN memberships m ON m.team_id = b.team_id AND b.requested_by LIKE 'user:%'
                            AND m.user_id = split_part(substr(b.requested_by, 6), ' ', 1)
         WHERE r.id = p_run_id
         ORDER BY b.requested_at DESC LIMIT 1;
        chosen_by := 'system:default-owner (asked for the stop)';
    END IF;
    IF user_id IS NULL THEN
        SELECT m.user_id INTO user_id FROM memberships m
         WHERE m.team_id = p_team_id AND m.role = 'admin' ORDER BY m.created_at, m.user_id LIMIT 1;
        chosen_by := 'system:default-owner (team admin)';
    END IF;
END;
$fn$;
