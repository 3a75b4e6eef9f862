/**
 * Credentials built the way the issue-12 attacker built them: a genuinely signed stamp whose
 * `proof.eip712Domain.types` also declares many struct types with many members, each type
 * depending on the next, and a document that carries one instance of every type. Hashing it
 * derives an `encodeType` string for each type that lists every type after it, so the work
 * grows with the square of the number of types while the body grows linearly.
 */
export function hostileCredential(base: Record<string, any>, typeCount: number, membersPerType: number): Record<string, any> {
  const credential = structuredClone(base);
  const types = credential.proof.eip712Domain.types as Record<string, { name: string; type: string }[]>;
  const fanOut: { name: string; type: string }[] = [];
  const instance: Record<string, unknown> = {};
  for (let i = 0; i < typeCount; i++) {
    const next = i + 1 < typeCount ? `T${i + 1}` : 'string';
    types[`T${i}`] = Array.from({ length: membersPerType }, (_, j) => ({ name: `m${j}`, type: j === 0 ? next : `T${Math.min(i + 1 + j, typeCount - 1)}` }));
    fanOut.push({ name: `t${i}`, type: `T${i}` });
    instance[`t${i}`] = {};
  }
  types.Fan = fanOut;
  types.Document!.push({ name: 'x', type: 'Fan' });
  credential.x = instance;
  return credential;
}

/** A hostile credential grown (by adding types) until its JSON is at least `bytes` long. */
export function hostileCredentialOfSize(base: Record<string, any>, bytes: number, membersPerType = 20): Record<string, any> {
  const perType = JSON.stringify(hostileCredential(base, 2, membersPerType)).length - JSON.stringify(hostileCredential(base, 1, membersPerType)).length;
  const typeCount = Math.ceil((bytes - JSON.stringify(base).length) / perType) + 1;
  return hostileCredential(base, typeCount, membersPerType);
}
