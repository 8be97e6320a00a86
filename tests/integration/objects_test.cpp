// list_objects and attributes: what a file holds besides array data, read and written back.
#include <cstring>
#include <filesystem>

#include "temp_dir.hpp"

namespace h5tile {
namespace {

using Objects = testing_support::TempDirTest;

TEST_F(Objects, ListsGroupsAndDatasetsDepthFirst) {
  std::vector<int> v(10, 1);
  to_file(view(v.data(), {10}), path("f.h5"), "/b", {.layout = Layout::Contiguous}).wait();
  to_file(view(v.data(), {2, 5}), path("f.h5"), "/a/x/y", {.layout = Layout::Contiguous, .mode = Mode::Append}).wait();
  const auto objects = list_objects(path("f.h5"));
  std::vector<std::pair<std::string, ObjectKind>> got;
  for (const auto& o : objects) got.emplace_back(o.name, o.kind);
  const std::vector<std::pair<std::string, ObjectKind>> expected{{"/a", ObjectKind::Group},
                                                                 {"/a/x", ObjectKind::Group},
                                                                 {"/a/x/y", ObjectKind::Dataset},
                                                                 {"/b", ObjectKind::Dataset}};
  EXPECT_EQ(got, expected);
}

TEST_F(Objects, AttributesRoundTrip) {
  std::vector<double> v(6, 2.5);
  to_file(view(v.data(), {2, 3}), path("f.h5"), "/g/d", {.layout = Layout::Contiguous}).wait();
  const std::vector<std::int16_t> numbers{1, -2, 3, -4};
  write_attribute(path("f.h5"), "g/d", "n", view(numbers.data(), {2, 2}));
  const double scalar = 4.25;
  write_attribute(path("f.h5"), "/", "s", view(&scalar, {}));
  write_attribute(path("f.h5"), "/g", "text", {"Grüße"}, {});
  write_attribute(path("f.h5"), "/g", "fixed", {"ab", "c"}, {2}, 3);
  write_attribute(path("f.h5"), "/g/d", "n", view(numbers.data(), {4}));  // replaces the 2 x 2 one

  const auto on_d = read_attributes(path("f.h5"), "/g/d");
  ASSERT_EQ(on_d.size(), 1U);
  EXPECT_EQ(on_d[0].name, "n");
  EXPECT_EQ(on_d[0].kind, AttributeKind::Numbers);
  EXPECT_EQ(on_d[0].shape, (Shape{4}));
  ASSERT_TRUE(on_d[0].numbers);
  EXPECT_EQ(on_d[0].numbers->dtype(), DType(DTypeKind::Int16));
  const auto read = on_d[0].numbers->as<std::int16_t>();
  EXPECT_EQ(std::vector<std::int16_t>(read.begin(), read.end()), numbers);

  const auto on_root = read_attributes(path("f.h5"), "/");
  ASSERT_EQ(on_root.size(), 1U);
  EXPECT_TRUE(on_root[0].shape.empty());
  EXPECT_EQ(on_root[0].numbers->as<double>()[0], scalar);

  const auto on_g = read_attributes(path("f.h5"), "/g");  // in name order
  ASSERT_EQ(on_g.size(), 2U);
  EXPECT_EQ(on_g[0].name, "fixed");
  EXPECT_EQ(on_g[0].kind, AttributeKind::FixedStrings);
  EXPECT_EQ(on_g[0].string_width, 3U);
  EXPECT_EQ(on_g[0].strings, (std::vector<std::string>{"ab", "c"}));
  EXPECT_EQ(on_g[1].kind, AttributeKind::VariableStrings);
  EXPECT_EQ(on_g[1].strings, (std::vector<std::string>{"Grüße"}));

  delete_attribute(path("f.h5"), "/g", "fixed");
  EXPECT_EQ(read_attributes(path("f.h5"), "/g").size(), 1U);
  EXPECT_THROW(delete_attribute(path("f.h5"), "/g", "fixed"), DatasetNotFound);
  // The data is untouched.
  const auto data = from_file(path("f.h5"), "/g/d");
  EXPECT_EQ(data.as<double>()[5], 2.5);
}

TEST_F(Objects, EmptyAttributesKeepTheirType) {
  std::vector<int> v(3, 1);
  to_file(view(v.data(), {3}), path("f.h5"), "/d", {.layout = Layout::Contiguous}).wait();
  write_empty_attribute(path("f.h5"), "/d", "e", DType(DTypeKind::Float32));
  const auto attributes = read_attributes(path("f.h5"), "d");
  ASSERT_EQ(attributes.size(), 1U);
  EXPECT_EQ(attributes[0].kind, AttributeKind::Empty);
  ASSERT_TRUE(attributes[0].numbers);
  EXPECT_EQ(attributes[0].numbers->dtype(), DType(DTypeKind::Float32));
  EXPECT_EQ(attributes[0].numbers->size(), 0U);
}

TEST_F(Objects, ErrorsNameWhatIsMissing) {
  std::vector<int> v(3, 1);
  to_file(view(v.data(), {3}), path("f.h5"), "/d", {.layout = Layout::Contiguous}).wait();
  try {
    (void)read_attributes(path("f.h5"), "/g/nope");
    ADD_FAILURE() << "no exception";
  } catch (const DatasetNotFound& e) {
    EXPECT_NE(std::string(e.what()).find("'/g/nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f.h5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_attribute(path("f.h5"), "/nope", "a", view(v.data(), {3})), DatasetNotFound);
  EXPECT_THROW(write_attribute(path("f.h5"), "/d", "", view(v.data(), {3})), InvalidArgument);
  EXPECT_THROW(write_attribute(path("f.h5"), "/d", "s", {"too long"}, {}, 3), InvalidArgument);
  EXPECT_THROW(write_attribute(path("f.h5"), "/d", "s", {"a", "b"}, {3}), InvalidArgument);
  EXPECT_THROW(write_attribute("http://127.0.0.1:9/f.h5", "/d", "a", view(v.data(), {3})), InvalidArgument);
  EXPECT_THROW((void)list_objects(path("missing.h5")), FileNotFound);
  std::filesystem::create_directory(path("dir.h5"));
  EXPECT_THROW((void)list_objects(path("dir.h5")), IsADirectory);
  EXPECT_THROW((void)read_attributes(path("dir.h5"), "/"), IsADirectory);
}

// A type given as NumPy's (DatasetCreation::numpy_type) is made as h5py makes it: describe reads
// back the same NumPy type; its elements are opaque bytes of its size, written and read unchanged.
TEST_F(Objects, CreatesStructuredTypesAsNumpyDescribesThem) {
  const auto made = [](DType dtype, std::string numpy_type, Shape shape) {
    DatasetCreation creation;
    creation.dtype = dtype;
    creation.numpy_type = std::move(numpy_type);
    creation.shape = std::move(shape);
    return creation;
  };
  create_file(path("f.h5"), true);
  const std::vector<std::pair<std::string, std::size_t>> types{
      {R"({"formats":["<i4",{"formats":["|u1","<f2"],"itemsize":4,"names":["x","y"],"offsets":[0,2]}],)"
       R"("itemsize":12,"names":["a","b"],"offsets":[0,8]})",
       12},
      {R"({"base":"|i1","enum":{"BLUE":42,"GREEN":1,"RED":0}})", 1},
      {R"({"base":">f8","shape":[2,3]})", 48},
  };
  for (std::size_t i = 0; i < types.size(); ++i) {
    const auto name = "/t" + std::to_string(i);
    const auto creation = made(DType::opaque(types[i].second), types[i].first, {3});
    create_dataset(path("f.h5"), name, creation);
    EXPECT_EQ(describe(path("f.h5"), name).numpy_type, types[i].first) << name;
    std::vector<unsigned char> bytes(3 * types[i].second);
    for (std::size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<unsigned char>(b % 251);
    ArrayView data;
    data.data = bytes.data();
    data.dtype = creation.dtype;
    data.shape = {3};
    write_into(path("f.h5"), name, data, {0});
    const auto back = from_file(path("f.h5"), name);
    ASSERT_EQ(back.nbytes(), bytes.size());
    EXPECT_EQ(std::memcmp(back.data(), bytes.data(), bytes.size()), 0) << name;
  }
  const auto big = made(DType::opaque(4), "\">i4\"", {2});
  create_dataset(path("f.h5"), "/big", big);
  EXPECT_EQ(describe(path("f.h5"), "/big").dtype, DType(DTypeKind::Int32));  // read as native numbers
  const auto wrong = made(DType::opaque(8), "\"<i4\"", {2});
  EXPECT_THROW(create_dataset(path("f.h5"), "/wrong", wrong), InvalidArgument);
  const auto text = made(DType::opaque(4), "not json", {2});
  EXPECT_THROW(create_dataset(path("f.h5"), "/text", text), InvalidArgument);
  const auto unknown = made(DType::opaque(16), "\"<U4\"", {2});
  EXPECT_THROW(create_dataset(path("f.h5"), "/unknown", unknown), UnsupportedType);
  EXPECT_FALSE(describe(path("f.h5"), "/t0").numpy_type.empty());
}

// Variable-length strings: made in UTF-8 with a fill value, written in part (write_strings), read
// back by read_strings with the fill value where nothing was written.
TEST_F(Objects, WritesVariableLengthStringsInPlace) {
  create_file(path("f.h5"), true);
  DatasetCreation creation;
  creation.dtype = DType(DTypeKind::VarString);
  creation.charset = "utf-8";
  creation.shape = {2, 3};
  const std::string fill = "f\xc3\xbcll";
  for (const char c : fill) creation.fill_value.push_back(static_cast<std::byte>(c));
  create_dataset(path("f.h5"), "/s", creation);
  const auto info = describe(path("f.h5"), "/s");
  EXPECT_EQ(info.charset, "utf-8");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(info.fill_value.data()), info.fill_value.size()), fill);
  write_strings(path("f.h5"), "/s", {"a", "", "Gr\xc3\xbc\xc3\x9f"}, {1, 3}, {1, 0});
  write_strings(path("f.h5"), "/s", {"x", "y"}, {1, 2}, {0, 0}, {1, 2});
  const std::vector<std::string> expected{"x", fill, "y", "a", "", "Gr\xc3\xbc\xc3\x9f"};
  EXPECT_EQ(read_strings(path("f.h5"), "/s"), expected);
  EXPECT_THROW(write_strings(path("f.h5"), "/s", {"a"}, {1, 2}, {0, 0}), InvalidArgument);       // too few
  EXPECT_THROW(write_strings(path("f.h5"), "/s", {"a", "b"}, {1, 2}, {0, 2}), InvalidArgument);  // past the end
  EXPECT_THROW(write_strings(path("f.h5"), "/s", {std::string("a\0b", 3)}, {1, 1}, {0, 0}), InvalidArgument);
  EXPECT_EQ(read_strings(path("f.h5"), "/s"), expected);  // nothing of the refused write
  creation.charset = "latin-1";
  EXPECT_THROW(create_dataset(path("f.h5"), "/t", creation), InvalidArgument);
}

// The storage keywords of h5py's create_dataset: a null dataspace, the scale-offset filter,
// external files, when fill values are written; and the combinations HDF5 cannot make, refused.
TEST_F(Objects, CreatesDatasetsWithHdf5sStorageOptions) {
  create_file(path("f.h5"), true);
  DatasetCreation empty;
  empty.null_space = true;
  create_dataset(path("f.h5"), "/empty", empty);
  EXPECT_TRUE(describe(path("f.h5"), "/empty").null_space);

  DatasetCreation scaled;
  scaled.dtype = DType(DTypeKind::Int32);
  scaled.shape = {100};
  scaled.chunk = {10};
  scaled.scale_offset = 0;
  scaled.fill_time = FillTime::Alloc;
  create_dataset(path("f.h5"), "/scaled", scaled);
  std::vector<std::int32_t> values(100);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 3);
  write_into(path("f.h5"), "/scaled", view(values.data(), {100}));
  const auto back = from_file(path("f.h5"), "/scaled");
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * sizeof(std::int32_t)), 0);
  EXPECT_EQ(describe(path("f.h5"), "/scaled").filters, (std::vector<std::string>{"scaleoffset"}));

  DatasetCreation outside;
  outside.dtype = DType(DTypeKind::Float64);
  outside.shape = {4};
  outside.max_shape = {kUnlimitedExtent};  // external storage grows without chunks
  outside.external = {{path("e.bin").string(), 8, kUnlimitedExtent}};
  create_dataset(path("f.h5"), "/outside", outside);
  const std::vector<double> four{1, 2, 3, 4};
  write_into(path("f.h5"), "/outside", view(four.data(), {4}));
  EXPECT_EQ(std::filesystem::file_size(path("e.bin")), 8 + 4 * sizeof(double));
  EXPECT_EQ(std::memcmp(from_file(path("f.h5"), "/outside").data(), four.data(), 4 * sizeof(double)), 0);

  auto refused = scaled;
  refused.dtype = DType(DTypeKind::Bool);
  EXPECT_THROW(create_dataset(path("f.h5"), "/bool", refused), InvalidArgument);  // scale-offset: numbers only
  refused = scaled;
  refused.chunk = {};
  EXPECT_THROW(create_dataset(path("f.h5"), "/unchunked", refused), InvalidArgument);
  refused = outside;
  refused.chunk = {2};
  EXPECT_THROW(create_dataset(path("f.h5"), "/chunked_external", refused), InvalidArgument);
  refused = empty;
  refused.shape = {3};
  EXPECT_THROW(create_dataset(path("f.h5"), "/empty_shaped", refused), InvalidArgument);
}

// Named datatypes: committed (h5py's group[name] = dtype), listed as such, and used by a dataset
// made with it; a second commit of the name and a dataset of another size refused.
TEST_F(Objects, CommitsNamedDatatypesThatDatasetsUse) {
  create_file(path("f.h5"), true);
  DatasetCreation type;
  type.dtype = DType::opaque(12);
  type.numpy_type = R"({"formats":["<i4","<f8"],"itemsize":12,"names":["a","b"],"offsets":[0,4]})";
  commit_datatype(path("f.h5"), "/types/pair", type);
  EXPECT_EQ(describe_named_type(path("f.h5"), "/types/pair").numpy_type, type.numpy_type);
  EXPECT_THROW(commit_datatype(path("f.h5"), "/types/pair", type), InvalidArgument);
  DatasetCreation uses = type;
  uses.numpy_type.clear();
  uses.named_type = "/types/pair";
  uses.shape = {2};
  create_dataset(path("f.h5"), "/d", uses);
  EXPECT_EQ(describe(path("f.h5"), "/d").numpy_type, type.numpy_type);
  uses.dtype = DType::opaque(8);
  EXPECT_THROW(create_dataset(path("f.h5"), "/e", uses), InvalidArgument);
  uses.dtype = DType::opaque(12);
  uses.named_type = "/types/none";
  EXPECT_THROW(create_dataset(path("f.h5"), "/f", uses), Error);
}

}  // namespace
}  // namespace h5tile
