import type { Db } from '../../db/connection.js';

export interface GrantForExport {
  id: number;
  admin_profile_id: number | null;
}

export interface ContributorInfoRow {
  handle: string | null;
  avatar_url: string | null;
  anonymized: number;
  comment: string;
}

export function exportsRepository(db: Db) {
  // Every address an opted-out profile contributed from; computed once per query.
  const optedOutAddresses = db
    .selectFrom('contributions as o')
    .innerJoin('profiles as p', 'p.id', 'o.profile_id')
    .select('o.address')
    .where('p.export_opt_out', '=', 1);

  return {
    /** `grants.json`: the active grants and where contributions go, by id. */
    async activeGrants() {
      return db
        .selectFrom('grants')
        .select(['title', 'admin_address', 'token_address', 'contract_address', 'network'])
        .where('active', '=', 1)
        .orderBy('id')
        .execute();
    },

    async grant(id: number): Promise<GrantForExport | undefined> {
      return db.selectFrom('grants').select(['id', 'admin_profile_id']).where('id', '=', id).executeTakeFirst();
    },

    async roundExists(number: number): Promise<boolean> {
      return (await db.selectFrom('grant_rounds').select('number').where('number', '=', number).executeTakeFirst()) !== undefined;
    },

    /** Whether the profile is the grant's admin or one of its team members. */
    async isTeamMember(grantId: number, profileId: number): Promise<boolean> {
      const row = await db
        .selectFrom('grants as g')
        .select('g.id')
        .where('g.id', '=', grantId)
        .where((eb) =>
          eb.or([
            eb('g.admin_profile_id', '=', profileId),
            eb.exists(
              eb
                .selectFrom('grant_team_members as m')
                .select('m.profile_id')
                .whereRef('m.grant_id', '=', 'g.id')
                .where('m.profile_id', '=', profileId),
            ),
          ]),
        )
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Distinct contributor addresses in address order, opted-out users' addresses left out. */
    async addresses(filter: { grantId?: number; roundNumber?: number }): Promise<string[]> {
      let query = db.selectFrom('contributions as c').select('c.address').distinct();
      if (filter.grantId !== undefined) query = query.where('c.grant_id', '=', filter.grantId);
      if (filter.roundNumber !== undefined) query = query.where('c.round_number', '=', filter.roundNumber);
      const rows = await query.where('c.address', 'not in', optedOutAddresses).orderBy('c.address').execute();
      return rows.map((r) => r.address);
    },

    /** Contributions of a grant in a round with their contributor's handle and avatar, in time order. */
    async contributorInfo(grantId: number, roundNumber: number): Promise<ContributorInfoRow[]> {
      return db
        .selectFrom('contributions as c')
        .leftJoin('profiles as p', 'p.id', 'c.profile_id')
        .select(['p.handle', 'p.avatar_url', 'c.anonymized', 'c.comment'])
        .where('c.grant_id', '=', grantId)
        .where('c.round_number', '=', roundNumber)
        .orderBy('c.created_on')
        .orderBy('c.id')
        .execute();
    },
  };
}

export type ExportsRepository = ReturnType<typeof exportsRepository>;
