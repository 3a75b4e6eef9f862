// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { Ownable } from "@openzeppelin/contracts/access/Ownable.sol";
import { ECDSA } from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import { EIP712 } from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {
    IEAS,
    AttestationRequestData,
    MultiAttestationRequest,
    MultiRevocationRequest,
    RevocationRequestData
} from "@ethereum-attestation-service/eas-contracts/contracts/IEAS.sol";

/// @notice One attestation of a signed request: the EAS schema, its expiry and its ABI-encoded data.
struct AttestationData {
    bytes32 schema;
    uint64 expirationTime;
    bytes data;
}

/// @notice What Stampgate's signer signs (EIP-712, domain "Stampgate Verifier" version "1"): the
///     attestations of one recipient, under the recipient's next nonce, until a deadline, for a fee.
struct AttestationRequest {
    address recipient;
    AttestationData[] attestations;
    uint256 nonce;
    uint64 deadline;
    uint256 fee;
}

/// @title StampgateVerifier
/// @notice The only attester of Stampgate's schemas. Anyone may submit a request signed by an
///     authorised signer (and pay its fee); the verifier then attests it on EAS in its own name,
///     which is what the resolver checks. Signers are a set so that a key is rotated without
///     redeploying: add the new one, switch the service to it, remove the old one.
contract StampgateVerifier is Ownable, EIP712 {
    bytes32 private constant ATTESTATION_DATA_TYPEHASH =
        keccak256("AttestationData(bytes32 schema,uint64 expirationTime,bytes data)");
    bytes32 private constant ATTESTATION_REQUEST_TYPEHASH =
        keccak256(
            "AttestationRequest(address recipient,AttestationData[] attestations,uint256 nonce,uint64 deadline,uint256 fee)"
            "AttestationData(bytes32 schema,uint64 expirationTime,bytes data)"
        );

    IEAS public immutable eas;

    /// @notice The nonce the next request of each recipient must carry.
    mapping(address recipient => uint256 nonce) public recipientNonces;
    /// @notice The fee, in wei, every request must carry and pay.
    uint256 public fee;
    mapping(address signer => bool authorised) private _signers;

    error UnknownSigner(address signer);
    error InvalidSignature();
    error InvalidNonce(uint256 expected, uint256 given);
    error Expired(uint64 deadline, uint256 blockTime);
    error WrongFee(uint256 expected, uint256 requested, uint256 paid);
    error NoAttestations();
    error ZeroAddress();
    error AlreadySigner(address signer);
    error NotSigner(address signer);
    error WithdrawFailed(address to, uint256 amount);

    event SignerAdded(address indexed signer);
    event SignerRemoved(address indexed signer);
    event FeeChanged(uint256 previousFee, uint256 newFee);
    event FeesWithdrawn(address indexed to, uint256 amount);
    event RequestAttested(address indexed recipient, address indexed signer, uint256 nonce, bytes32[] uids);
    event AttestationRevoked(bytes32 indexed schema, bytes32 indexed uid);

    constructor(IEAS eas_, address initialOwner) Ownable(initialOwner) EIP712("Stampgate Verifier", "1") {
        if (address(eas_) == address(0)) revert ZeroAddress();
        eas = eas_;
    }

    /// @notice Checks a signed request and attests its attestations on EAS; returns their UIDs in order.
    function verifyAndAttest(
        AttestationRequest calldata request,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external payable returns (bytes32[] memory uids) {
        if (block.timestamp > request.deadline) revert Expired(request.deadline, block.timestamp);
        if (request.fee != fee || msg.value != request.fee) revert WrongFee(fee, request.fee, msg.value);
        uint256 count = request.attestations.length;
        if (count == 0) revert NoAttestations();

        (address signer, ECDSA.RecoverError failure, ) = ECDSA.tryRecover(hashRequest(request), v, r, s);
        if (failure != ECDSA.RecoverError.NoError) revert InvalidSignature();
        if (!_signers[signer]) revert UnknownSigner(signer);

        uint256 expected = recipientNonces[request.recipient];
        if (request.nonce != expected) revert InvalidNonce(expected, request.nonce);
        recipientNonces[request.recipient] = expected + 1;

        // One EAS request per attestation keeps their order (and so the order of the UIDs) exactly the signed one.
        MultiAttestationRequest[] memory multi = new MultiAttestationRequest[](count);
        for (uint256 i = 0; i < count; ++i) {
            AttestationData calldata item = request.attestations[i];
            AttestationRequestData[] memory data = new AttestationRequestData[](1);
            data[0] = AttestationRequestData({
                recipient: request.recipient,
                expirationTime: item.expirationTime,
                revocable: true,
                refUID: bytes32(0),
                data: item.data,
                value: 0
            });
            multi[i] = MultiAttestationRequest({ schema: item.schema, data: data });
        }
        uids = eas.multiAttest(multi);
        emit RequestAttested(request.recipient, signer, expected, uids);
    }

    /// @notice The EIP-712 digest the signer signs for `request`.
    function hashRequest(AttestationRequest calldata request) public view returns (bytes32) {
        uint256 count = request.attestations.length;
        bytes32[] memory itemHashes = new bytes32[](count);
        for (uint256 i = 0; i < count; ++i) {
            AttestationData calldata item = request.attestations[i];
            itemHashes[i] = keccak256(
                abi.encode(ATTESTATION_DATA_TYPEHASH, item.schema, item.expirationTime, keccak256(item.data))
            );
        }
        return
            _hashTypedDataV4(
                keccak256(
                    abi.encode(
                        ATTESTATION_REQUEST_TYPEHASH,
                        request.recipient,
                        keccak256(abi.encodePacked(itemHashes)),
                        request.nonce,
                        request.deadline,
                        request.fee
                    )
                )
            );
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    function isSigner(address signer) external view returns (bool) {
        return _signers[signer];
    }

    function addSigner(address signer) external onlyOwner {
        if (signer == address(0)) revert ZeroAddress();
        if (_signers[signer]) revert AlreadySigner(signer);
        _signers[signer] = true;
        emit SignerAdded(signer);
    }

    function removeSigner(address signer) external onlyOwner {
        if (!_signers[signer]) revert NotSigner(signer);
        _signers[signer] = false;
        emit SignerRemoved(signer);
    }

    function setFee(uint256 newFee) external onlyOwner {
        emit FeeChanged(fee, newFee);
        fee = newFee;
    }

    /// @notice Sends every fee collected so far to `to`.
    function withdrawFees(address payable to) external onlyOwner {
        if (to == address(0)) revert ZeroAddress();
        uint256 amount = address(this).balance;
        (bool sent, ) = to.call{ value: amount }("");
        if (!sent) revert WithdrawFailed(to, amount);
        emit FeesWithdrawn(to, amount);
    }

    /// @notice Revokes one attestation this verifier made (a ban).
    function revoke(bytes32 schema, bytes32 uid) external onlyOwner {
        bytes32[] memory uids = new bytes32[](1);
        uids[0] = uid;
        _revoke(schema, uids);
    }

    /// @notice Revokes several attestations of one schema this verifier made.
    function multiRevoke(bytes32 schema, bytes32[] calldata uids) external onlyOwner {
        _revoke(schema, uids);
    }

    function _revoke(bytes32 schema, bytes32[] memory uids) private {
        MultiRevocationRequest[] memory multi = new MultiRevocationRequest[](1);
        RevocationRequestData[] memory data = new RevocationRequestData[](uids.length);
        for (uint256 i = 0; i < uids.length; ++i) data[i] = RevocationRequestData({ uid: uids[i], value: 0 });
        multi[0] = MultiRevocationRequest({ schema: schema, data: data });
        eas.multiRevoke(multi);
        for (uint256 i = 0; i < uids.length; ++i) emit AttestationRevoked(schema, uids[i]);
    }
}
