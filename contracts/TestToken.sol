// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Just enough of ERC-20 for the legacy read to ask a token its decimals and symbol (tests only).
contract TestToken {
    string public name;
    string public symbol;
    uint8 public decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }
}
