// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The one view of Stampgate's decoder this contract needs (contracts/StampgateDecoder.sol):
/// passing, unexpired and unrevoked score attestation of `user` for `scorerId`.
interface IStampgateDecoder {
    function isHuman(uint256 scorerId, address user) external view returns (bool);
}

/// An airdrop-style claim open only to addresses whose Stampgate score is on this chain and
/// passing: the contract asks the decoder, never Stampgate's API. Deploy it with the decoder's
/// address from `GET /v2/onchain/chains` (or `stampgate onchain deploy`) and your scorer id.
contract HumanGatedClaim {
    error NotHuman(address user);
    error AlreadyClaimed(address user);

    event Claimed(address indexed user);

    IStampgateDecoder public immutable decoder;
    uint256 public immutable scorerId;
    mapping(address => bool) public claimed;

    constructor(IStampgateDecoder decoder_, uint256 scorerId_) {
        decoder = decoder_;
        scorerId = scorerId_;
    }

    function claim() external {
        if (claimed[msg.sender]) revert AlreadyClaimed(msg.sender);
        if (!decoder.isHuman(scorerId, msg.sender)) revert NotHuman(msg.sender);
        claimed[msg.sender] = true;
        emit Claimed(msg.sender);
    }
}
