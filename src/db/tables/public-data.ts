/** Tables of the public data API. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PublicDataTables {}
