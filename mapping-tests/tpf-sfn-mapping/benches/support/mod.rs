pub mod long_contract;
