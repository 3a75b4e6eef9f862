// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IEAS, Attestation } from "@ethereum-attestation-service/eas-contracts/contracts/IEAS.sol";
import { SchemaResolver } from "@ethereum-attestation-service/eas-contracts/contracts/resolver/SchemaResolver.sol";

/// @notice A recipient's latest score from one scorer, as attested (score x 10^4).
struct CachedScore {
    bytes32 uid;
    uint32 score;
    bool passing;
    uint64 time;
    uint64 expirationTime;
}

/// @title StampgateResolver
/// @notice The EAS resolver of Stampgate's two schemas. It admits only the verifier as attester,
///     and keeps per recipient its latest score per scorer and the UID of its latest passport, so
///     that a score read is two storage reads (no attestation data to load) and a ban finds what
///     to revoke. A revocation clears what it kept.
contract StampgateResolver is SchemaResolver {
    /// @dev The exact schema strings of contracts/abi/schemas.json; their UIDs name this resolver.
    string public constant SCORE_SCHEMA =
        "bool passing_score, uint8 score_decimals, uint128 scorer_id, uint32 score, uint32 threshold, (string provider, uint256 score)[] stamps";
    string public constant PASSPORT_SCHEMA =
        "(string provider, bytes32 hash, uint64 issuance_date, uint64 expiration_date)[] stamps";
    uint8 public constant SCORE_DECIMALS = 4;

    address public immutable verifier;
    bytes32 public immutable scoreSchemaUid;
    bytes32 public immutable passportSchemaUid;

    mapping(address recipient => mapping(uint256 scorerId => CachedScore)) private _scores;
    mapping(address recipient => uint256[] scorerIds) private _scorerIds;
    mapping(address recipient => mapping(uint256 scorerId => bool)) private _hasScorerId;
    mapping(address recipient => bytes32 uid) private _passportUids;

    error NotVerifier(address attester);
    error UnknownSchema(bytes32 schema);
    error UnsupportedScoreDecimals(uint8 decimals);
    error MalformedScore();

    event ScoreCached(address indexed recipient, uint256 indexed scorerId, bytes32 uid);
    event PassportCached(address indexed recipient, bytes32 uid);

    constructor(IEAS eas, address verifier_) SchemaResolver(eas) {
        verifier = verifier_;
        // The registry's UID of a schema: keccak256(schema, resolver, revocable).
        scoreSchemaUid = keccak256(abi.encodePacked(SCORE_SCHEMA, address(this), true));
        passportSchemaUid = keccak256(abi.encodePacked(PASSPORT_SCHEMA, address(this), true));
    }

    /// @notice The recipient's latest score attestation from `scorerId` (zero when none or revoked; expiry not applied).
    function getCachedScore(address recipient, uint256 scorerId) external view returns (CachedScore memory) {
        return _scores[recipient][scorerId];
    }

    function scoreUid(address recipient, uint256 scorerId) external view returns (bytes32) {
        return _scores[recipient][scorerId].uid;
    }

    function passportUid(address recipient) external view returns (bytes32) {
        return _passportUids[recipient];
    }

    /// @notice Every scorer that has ever attested a score for `recipient` (so that a ban finds them all).
    function scorerIdsOf(address recipient) external view returns (uint256[] memory) {
        return _scorerIds[recipient];
    }

    function onAttest(Attestation calldata attestation, uint256 /* value */) internal override returns (bool) {
        if (attestation.attester != verifier) revert NotVerifier(attestation.attester);
        if (attestation.schema == scoreSchemaUid) {
            _cacheScore(attestation);
        } else if (attestation.schema == passportSchemaUid) {
            _passportUids[attestation.recipient] = attestation.uid;
            emit PassportCached(attestation.recipient, attestation.uid);
        } else {
            revert UnknownSchema(attestation.schema);
        }
        return true;
    }

    function onRevoke(Attestation calldata attestation, uint256 /* value */) internal override returns (bool) {
        if (attestation.attester != verifier) revert NotVerifier(attestation.attester);
        if (attestation.schema == scoreSchemaUid) {
            (, , uint128 scorerId, , ) = _scoreHead(attestation.data);
            if (_scores[attestation.recipient][scorerId].uid == attestation.uid) {
                delete _scores[attestation.recipient][scorerId];
            }
        } else if (attestation.schema == passportSchemaUid) {
            if (_passportUids[attestation.recipient] == attestation.uid) delete _passportUids[attestation.recipient];
        } else {
            revert UnknownSchema(attestation.schema);
        }
        return true;
    }

    function _cacheScore(Attestation calldata attestation) private {
        (bool passing, uint8 decimals, uint128 scorerId, uint32 score, ) = _scoreHead(attestation.data);
        if (decimals != SCORE_DECIMALS) revert UnsupportedScoreDecimals(decimals);
        address recipient = attestation.recipient;
        if (!_hasScorerId[recipient][scorerId]) {
            _hasScorerId[recipient][scorerId] = true;
            _scorerIds[recipient].push(scorerId);
        }
        _scores[recipient][scorerId] = CachedScore({
            uid: attestation.uid,
            score: score,
            passing: passing,
            time: attestation.time,
            expirationTime: attestation.expirationTime
        });
        emit ScoreCached(recipient, scorerId, attestation.uid);
    }

    /// @dev The five static fields that lead the score data; the stamps list after them is not needed here.
    function _scoreHead(bytes calldata data) private pure returns (bool, uint8, uint128, uint32, uint32) {
        if (data.length < 192) revert MalformedScore();
        return abi.decode(data[:160], (bool, uint8, uint128, uint32, uint32));
    }
}
