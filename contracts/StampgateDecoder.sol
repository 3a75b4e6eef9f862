// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IEAS, Attestation } from "@ethereum-attestation-service/eas-contracts/contracts/IEAS.sol";
import { StampgateResolver, CachedScore } from "./StampgateResolver.sol";

/// @notice One stamp of a passport attestation (dates in Unix seconds).
struct Stamp {
    string provider;
    bytes32 hash;
    uint64 issuanceDate;
    uint64 expirationDate;
}

/// @title StampgateDecoder
/// @notice What integrators' contracts call: a recipient's score per scorer and its passport,
///     read from Stampgate's attestations (expired or revoked ones read as none).
contract StampgateDecoder {
    IEAS public immutable eas;
    StampgateResolver public immutable resolver;

    constructor(IEAS eas_, StampgateResolver resolver_) {
        eas = eas_;
        resolver = resolver_;
    }

    /// @notice The latest score of `user` from `scorerId` (x 10^4); all zero when none, expired or revoked.
    function getScore(
        uint256 scorerId,
        address user
    ) public view returns (uint256 score, bool passing, uint64 time, uint64 expirationTime) {
        CachedScore memory cached = resolver.getCachedScore(user, scorerId);
        if (cached.uid == bytes32(0) || _expired(cached.expirationTime)) return (0, false, 0, 0);
        return (cached.score, cached.passing, cached.time, cached.expirationTime);
    }

    /// @notice True when `user`'s latest score from `scorerId` passes and is neither expired nor revoked.
    function isHuman(uint256 scorerId, address user) external view returns (bool) {
        (, bool passing, , ) = getScore(scorerId, user);
        return passing;
    }

    /// @notice The unexpired stamps of `user`'s latest passport attestation (none when it expired or was revoked).
    function getPassport(address user) external view returns (Stamp[] memory stamps) {
        bytes32 uid = resolver.passportUid(user);
        if (uid == bytes32(0)) return stamps;
        Attestation memory attestation = eas.getAttestation(uid);
        if (attestation.revocationTime != 0 || _expired(attestation.expirationTime)) return stamps;
        // The passport schema's tuple has Stamp's fields in Stamp's order.
        Stamp[] memory all = abi.decode(attestation.data, (Stamp[]));
        uint256 live = 0;
        for (uint256 i = 0; i < all.length; ++i) if (!_expired(all[i].expirationDate)) ++live;
        stamps = new Stamp[](live);
        uint256 next = 0;
        for (uint256 i = 0; i < all.length; ++i) {
            if (!_expired(all[i].expirationDate)) stamps[next++] = all[i];
        }
    }

    /// @dev Zero is EAS's "never expires".
    function _expired(uint64 expirationTime) private view returns (bool) {
        return expirationTime != 0 && expirationTime <= block.timestamp;
    }
}
