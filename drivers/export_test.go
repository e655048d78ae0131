package drivers

// DescribeReadError is describeReadError, for the external tests.
var DescribeReadError = describeReadError
