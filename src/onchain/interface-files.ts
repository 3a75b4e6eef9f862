/**
 * The onchain interface both sides share, read from the JSON files the package ships
 * (`contracts/abi/`): the two EAS schema strings and the verifier's EIP-712 request type.
 */
import { readFileSync } from 'node:fs';

function shipped<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../contracts/abi/${name}`, import.meta.url), 'utf8')) as T;
}

export interface SchemaStrings {
  score: string;
  passport: string;
  revocable: boolean;
  score_decimals: number;
}

export interface TypedField {
  name: string;
  type: string;
}

export interface VerifierTypes {
  domain: { name: string; version: string };
  primaryType: 'AttestationRequest';
  types: { AttestationRequest: TypedField[]; AttestationData: TypedField[] };
}

export const schemaStrings: SchemaStrings = shipped('schemas.json');
export const verifierTypes: VerifierTypes = shipped('verifier-eip712.json');
