#pragma once
// A trading day kept as a folder of files (the SSE Level-2 day, mapped vendor layouts):
// finding a file by its stem and the day's date from the folder name.
#include <filesystem>
#include <string>

namespace ts::ingest {

// dir/<stem>.csv.gz or dir/<stem>.csv, whichever exists (.csv.gz first); "" if neither.
std::string find_day_file(const std::filesystem::path& dir, const std::string& stem);

// "…/600519-20230201" → 20230201; 0 if the name does not end in "-YYYYMMDD", "_YYYYMMDD" or
// consist of "YYYYMMDD".
int date_from_dir_name(std::string path);

}  // namespace ts::ingest
