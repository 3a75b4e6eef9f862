/**
 * The onchain interface both sides share, as values: the two EAS schema strings and the
 * verifier's EIP-712 request type, read once through `contract-artifacts.ts` (the one reader of
 * the JSON files the package ships in `contracts/abi/`).
 */
import { schemaStrings as readSchemaStrings, verifierTypedData, type VerifierTypedData } from './contract-artifacts.js';

export type VerifierTypes = VerifierTypedData;

export const schemaStrings = readSchemaStrings();
export const verifierTypes: VerifierTypes = verifierTypedData();
