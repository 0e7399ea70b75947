import sys
import unittest

import shapes


class AreaTest(unittest.TestCase):
    def test_square(self):
        self.assertEqual(shapes.area(3, 3), 9)

    @unittest.skip("metric units come later")
    def test_metric(self):
        self.assertEqual(shapes.area(1, 1), 1)

    def test_rectangle(self):
        self.assertEqual(shapes.area(2, 5), 10)

    @unittest.skipIf(sys.version_info < (3, 0), "python 2 only")
    def test_conditional(self):
        self.assertEqual(shapes.area(4, 1), 4)

    def test_skip_inside(self):
        if True:
            self.skipTest("not on this platform")
        self.assertEqual(shapes.area(1, 2), 2)


@unittest.skip("whole class skipped")
class LegacyTest(unittest.TestCase):
    def test_old(self):
        self.assertEqual(shapes.area(1, 1), 1)
