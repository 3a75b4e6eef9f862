// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * The legacy bounty index: bounties keyed by their issue URL, read with
 * `bountydetails(string)`. URLs are normalised to end with exactly one `/`
 * appended when missing, both when posting and when reading, so
 * `https://github.com/org/repo/issues/1` and `…/issues/1/` are the same bounty.
 */
contract BountyIndex {
    struct Bounty {
        uint256 amount;
        address tokenAddress;
        address bountyOwner;
        address claimee;
        bool open;
        bool initialized;
        string issueURL;
        uint256 creationTime;
        string metaData;
        uint256 expirationTime;
        string claimeeMetaData;
    }

    mapping(string => Bounty) private bounties;

    event bountyPosted(string issueURL, address bountyOwner, uint256 amount, address tokenAddress);

    function normalizeURL(string memory url) public pure returns (string memory) {
        bytes memory b = bytes(url);
        if (b.length > 0 && b[b.length - 1] == "/") return url;
        return string(abi.encodePacked(url, "/"));
    }

    /// Posts a bounty on an issue; `amount` is in the smallest unit of `tokenAddress` (zero address = ETH).
    function postBounty(
        string calldata issueURL,
        uint256 amount,
        address tokenAddress,
        string calldata metaData,
        uint256 expirationTime
    ) external returns (string memory) {
        string memory key = normalizeURL(issueURL);
        Bounty storage b = bounties[key];
        require(!b.initialized, "a bounty exists for this issue");
        b.amount = amount;
        b.tokenAddress = tokenAddress;
        b.bountyOwner = msg.sender;
        b.open = true;
        b.initialized = true;
        b.issueURL = key;
        b.creationTime = block.timestamp;
        b.metaData = metaData;
        b.expirationTime = expirationTime;
        emit bountyPosted(key, msg.sender, amount, tokenAddress);
        return key;
    }

    function bountydetails(string calldata issueURL)
        external
        view
        returns (
            uint256 amount,
            address tokenAddress,
            address bountyOwner,
            address claimee,
            bool open,
            bool initialized,
            string memory url,
            uint256 creationTime,
            string memory metaData,
            uint256 expirationTime,
            string memory claimeeMetaData
        )
    {
        Bounty storage b = bounties[normalizeURL(issueURL)];
        return (
            b.amount,
            b.tokenAddress,
            b.bountyOwner,
            b.claimee,
            b.open,
            b.initialized,
            b.issueURL,
            b.creationTime,
            b.metaData,
            b.expirationTime,
            b.claimeeMetaData
        );
    }
}
