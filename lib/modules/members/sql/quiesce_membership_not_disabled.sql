CREATE OR REPLACE FUNCTION quiesce_membership_not_disabled() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM disabled_memberships d WHERE d.team_id = NEW.team_id AND d.user_id = NEW.user_id) THEN
    RAISE EXCEPTION 'membership of user % in team % is disabled', NEW.user_id, NEW.team_id USING ERRCODE = '23505';
  END IF;
  RETURN NEW;
END
$$;
