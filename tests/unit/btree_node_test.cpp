// Reading the child addresses of a v1 B-tree node of chunks from its bytes (hdf5/btree_node.hpp),
// on nodes built here as HDF5 lays them out: a wrong reading must be no reading.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hdf5/btree_node.hpp"

namespace h5tile::detail {
namespace {

// A node of a chunk tree of a dataset of `rank` axes with 2K = `two_k` children at most and
// addresses of 8 bytes: `children[i]` under the key whose chunk offsets are (i * 32, 0, ...).
struct NodeSpec {
  unsigned rank = 2;
  unsigned two_k = 64;
  unsigned type = 1;
  unsigned level = 1;
  std::vector<std::uint64_t> children;
};

void put(std::vector<std::byte>& out, std::size_t at, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

std::vector<std::byte> node_bytes(const NodeSpec& s) {
  const std::size_t key = 8 + 8 * (s.rank + 1);
  const std::size_t head = 8 + 2 * 8;
  std::vector<std::byte> out(head + s.two_k * 8 + (s.two_k + 1) * key);
  std::memcpy(out.data(), "TREE", 4);
  out[4] = static_cast<std::byte>(s.type);
  out[5] = static_cast<std::byte>(s.level);
  put(out, 6, s.children.size(), 2);
  put(out, 8, ~std::uint64_t{0}, 8);   // no left sibling
  put(out, 16, ~std::uint64_t{0}, 8);  // no right sibling
  for (std::size_t i = 0; i <= s.children.size(); ++i) {
    const auto at = head + i * (key + 8);
    put(out, at, 1000, 4);        // the chunk's stored size
    put(out, at + 8, i * 32, 8);  // its first row; the other offsets 0
    if (i < s.children.size()) put(out, at + key, s.children[i], 8);
  }
  return out;
}

constexpr std::uint64_t kFile = 1 << 20;

TEST(ChunkBtreeNode, ChildrenAndLevelAreRead) {
  for (const unsigned rank : {1U, 2U, 3U, 7U}) {
    const NodeSpec spec{.rank = rank, .children = {5000, 90000, 20000, 400000}};
    const auto node = parse_chunk_btree_node(node_bytes(spec), kFile);
    ASSERT_TRUE(node) << "rank " << rank;
    EXPECT_EQ(node->level, 1U);
    EXPECT_EQ(node->children, spec.children);
  }
  const NodeSpec leaf{.level = 0, .children = {7000, 3000, 11000}};
  ASSERT_TRUE(parse_chunk_btree_node(node_bytes(leaf), kFile));
  EXPECT_EQ(parse_chunk_btree_node(node_bytes(leaf), kFile)->level, 0U);
}

TEST(ChunkBtreeNode, WhatDoesNotReadAsAChunkNodeIsNone) {
  const NodeSpec good{.children = {5000, 90000, 20000}};
  auto bytes = node_bytes(good);
  EXPECT_FALSE(parse_chunk_btree_node(std::span(bytes).first(bytes.size() - 1), kFile));  // not a node's size
  auto group = good;
  group.type = 0;  // a group's tree
  EXPECT_FALSE(parse_chunk_btree_node(node_bytes(group), kFile));
  auto signature = bytes;
  signature[0] = std::byte{'X'};
  EXPECT_FALSE(parse_chunk_btree_node(signature, kFile));
  auto past_end = good;
  past_end.children[1] = kFile - 100;  // a child node would reach past the end of the file
  EXPECT_FALSE(parse_chunk_btree_node(node_bytes(past_end), kFile));
  auto twice = good;
  twice.children[2] = twice.children[0];
  EXPECT_FALSE(parse_chunk_btree_node(node_bytes(twice), kFile));
  auto unordered = bytes;  // the second key before the first
  put(unordered, 8 + 16 + 1 * (32 + 8) + 8, 0, 8);
  EXPECT_FALSE(parse_chunk_btree_node(unordered, kFile));
  auto element_offset = bytes;  // a key whose last offset (the element's bytes) is not 0
  put(element_offset, 8 + 16 + 8 + 16, 4, 8);
  EXPECT_FALSE(parse_chunk_btree_node(element_offset, kFile));
  auto too_many = bytes;
  put(too_many, 6, 65, 2);  // more entries than 2K
  EXPECT_FALSE(parse_chunk_btree_node(too_many, kFile));
  auto none = good;
  none.children.clear();
  EXPECT_FALSE(parse_chunk_btree_node(node_bytes(none), kFile));
}

}  // namespace
}  // namespace h5tile::detail
