// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * A minimal round-based staking contract with the events Stampgate indexes.
 *
 * Amounts are bookkeeping only (no token moves): the events are what matters to
 * the indexer. An address stakes on itself (`selfStake`) or on other addresses
 * (`xStake`, community staking); `staked` false marks an unstake of `amount`.
 */
contract IdentityStaking {
    event roundCreated(uint256 id);
    event selfStake(uint256 roundId, address staker, uint256 amount, bool staked);
    event xStake(uint256 roundId, address staker, address user, uint256 amount, bool staked);

    address public owner;
    uint256 public latestRound;

    /// round => staker => self stake
    mapping(uint256 => mapping(address => uint256)) public stakes;
    /// round => staker => user => community stake
    mapping(uint256 => mapping(address => mapping(address => uint256))) public xstakes;

    constructor() {
        owner = msg.sender;
    }

    modifier roundExists(uint256 roundId) {
        require(roundId > 0 && roundId <= latestRound, "unknown round");
        _;
    }

    function createRound() external returns (uint256) {
        require(msg.sender == owner, "only the owner creates rounds");
        latestRound += 1;
        emit roundCreated(latestRound);
        return latestRound;
    }

    function stake(uint256 roundId, uint256 amount) external roundExists(roundId) {
        require(amount > 0, "zero amount");
        stakes[roundId][msg.sender] += amount;
        emit selfStake(roundId, msg.sender, amount, true);
    }

    function unstake(uint256 roundId, uint256 amount) external roundExists(roundId) {
        require(amount > 0 && stakes[roundId][msg.sender] >= amount, "not staked");
        stakes[roundId][msg.sender] -= amount;
        emit selfStake(roundId, msg.sender, amount, false);
    }

    function stakeUsers(uint256 roundId, address[] calldata users, uint256[] calldata amounts) external roundExists(roundId) {
        require(users.length == amounts.length, "length mismatch");
        for (uint256 i = 0; i < users.length; i++) {
            require(users[i] != msg.sender, "use stake() for yourself");
            require(amounts[i] > 0, "zero amount");
            xstakes[roundId][msg.sender][users[i]] += amounts[i];
            emit xStake(roundId, msg.sender, users[i], amounts[i], true);
        }
    }

    function unstakeUsers(uint256 roundId, address[] calldata users, uint256[] calldata amounts) external roundExists(roundId) {
        require(users.length == amounts.length, "length mismatch");
        for (uint256 i = 0; i < users.length; i++) {
            require(amounts[i] > 0 && xstakes[roundId][msg.sender][users[i]] >= amounts[i], "not staked");
            xstakes[roundId][msg.sender][users[i]] -= amounts[i];
            emit xStake(roundId, msg.sender, users[i], amounts[i], false);
        }
    }
}
