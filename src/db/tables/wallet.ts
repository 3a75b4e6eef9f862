/** Tables of wallet sessions (Sign-In with Ethereum). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface WalletTables {}
