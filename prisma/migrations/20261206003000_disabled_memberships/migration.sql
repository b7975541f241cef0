-- A membership disabled by a team admin: the row leaves `memberships` and waits here, with its role,
-- until an admin of the same team enables it again. Moving the row (rather than a flag on it) keeps
-- every reader of `memberships` right without a change: console sessions, operator keys, the gate's
-- own SQL and the `quiesce_auth` notice (the DELETE fires memberships_auth_added_removed).
CREATE TABLE "disabled_memberships" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "member_since" TIMESTAMPTZ(3) NOT NULL,
    "disabled_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_by" TEXT NOT NULL,

    CONSTRAINT "disabled_memberships_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "disabled_memberships_team_id_user_id_key" ON "disabled_memberships"("team_id", "user_id");
CREATE INDEX "disabled_memberships_user_id_idx" ON "disabled_memberships"("user_id");
ALTER TABLE "disabled_memberships" ADD CONSTRAINT "disabled_memberships_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "disabled_memberships" ADD CONSTRAINT "disabled_memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- No writer (a seed, a script) may re-add a disabled member behind the admin's back: enabling goes
-- through the dal, which removes the disabled row first in the same transaction.
CREATE FUNCTION quiesce_membership_not_disabled() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM disabled_memberships d WHERE d.team_id = NEW.team_id AND d.user_id = NEW.user_id) THEN
    RAISE EXCEPTION 'membership of user % in team % is disabled', NEW.user_id, NEW.team_id USING ERRCODE = '23505';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER memberships_not_disabled BEFORE INSERT OR UPDATE OF team_id, user_id ON memberships FOR EACH ROW
  EXECUTE FUNCTION quiesce_membership_not_disabled();
