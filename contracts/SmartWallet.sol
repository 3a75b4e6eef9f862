// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * Test fixtures for smart-wallet signatures: the smallest contract wallet that
 * speaks ERC-1271, and a CREATE2 factory that makes its address known before it
 * exists (the counterfactual wallet that ERC-6492 signatures are about).
 * Not a wallet to hold funds with: it has no way to move anything.
 */
contract OwnedWallet {
    /// ERC-1271's "valid" answer: bytes4(keccak256("isValidSignature(bytes32,bytes)")).
    bytes4 internal constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    /// Any other value means "not valid"; this one is what most wallets return.
    bytes4 internal constant ERC1271_INVALID = 0xffffffff;
    /// Half the secp256k1 order: signatures with a larger s are the malleable mirror of a valid one.
    uint256 internal constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// The externally owned account whose signatures this wallet accepts as its own.
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /**
     * ERC-1271: the wallet vouches for `hash` when `signature` is the owner's
     * 65-byte (r, s, v) signature over exactly that hash. The hash is used as
     * given (for `personal_sign` it is already the EIP-191 digest), so the owner's
     * ordinary message signature is the wallet's signature.
     */
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return ERC1271_INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > HALF_ORDER) return ERC1271_INVALID;
        address signer = ecrecover(hash, v, r, s);
        // ecrecover answers address(0) for garbage; the owner is never address(0) in the tests.
        if (signer == address(0) || signer != owner) return ERC1271_INVALID;
        return ERC1271_MAGIC_VALUE;
    }
}

/**
 * Deploys `OwnedWallet`s with CREATE2, so a wallet's address depends only on this
 * factory, the salt and the owner: it can sign (ERC-6492) before it is deployed.
 */
contract OwnedWalletFactory {
    event WalletDeployed(address wallet, address owner, bytes32 salt);

    /// Deploys the wallet of (owner, salt); the calldata of this call is what an ERC-6492 signature carries.
    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = address(new OwnedWallet{salt: salt}(owner));
        emit WalletDeployed(wallet, owner, salt);
    }

    /// The address `deploy(owner, salt)` creates (or created).
    function walletAddress(address owner, bytes32 salt) external view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(OwnedWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
